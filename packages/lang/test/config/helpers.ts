import { type CompiledRepo, type CompileOptions, compileRepo, type Diagnostic } from '@maitento/lang';

/** Compiles a repo given as `{ path: content }`. */
export function compile(files: Record<string, string>, options?: CompileOptions): CompiledRepo {
  return compileRepo(
    Object.entries(files).map(([path, content]) => ({ path, content })),
    options,
  );
}

/** The diagnostics as `file:line:column code`, the form most assertions compare. */
export function where(diagnostics: Diagnostic[]): string[] {
  return diagnostics.map((d) => `${d.file}:${d.line}:${d.column} ${d.code}`);
}

/** A valid GET connector with one path and one query parameter. */
export const ordersConnector = `method = "GET"
url = "https://orders.example.com/orders/{orderId}"
description = "One order"
parameters.path = [ { name = "orderId" } ]
parameters.query = [ { name = "expand" type = "boolean" } ]
`;

/** A valid POST connector with a nested body. */
export const refundConnector = `method = "POST"
url = "https://orders.example.com/orders/{orderId}/refund"
description = "Refund"
parameters.path = [ { name = "orderId" } ]
schema.request = {
  type = "object"
  properties = {
    amount = { type = "number" }
    reason = { type = "string" }
    address = { type = "object" properties = { city = { type = "string" } zip = { type = "string" } } }
  }
  required = [ "amount" ]
}
`;
