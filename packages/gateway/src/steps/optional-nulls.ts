import type { Json, JsonSchema } from '@maitento/lang';
import { resolveLocalRef } from '@maitento/lang/json-schema';

type JsonObject = { [key: string]: Json };

/**
 * Where optional body fields live in a `schema.request`, following the same structure the model-facing
 * definition makes nullable: `properties` at every depth and the object `items` of arrays, through local `$ref`s
 * (`#/$defs/Address`), each followed once a path (a recursive definition is planned one level deep).
 */
interface NullPlan {
  /** Listed fields that are not in `required`: a `null` there means "not given". */
  readonly optional: ReadonlySet<string>;
  /** Plans of listed fields whose schema lists properties or object items. */
  readonly children: ReadonlyMap<string, NullPlan>;
  /** The plan of each element, for an array schema whose items list properties. */
  readonly items?: NullPlan;
}

const plans = new WeakMap<object, NullPlan | null>();

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function planOf(written: Json | JsonSchema | undefined, root: Json, seen: ReadonlySet<string>): NullPlan | undefined {
  if (!isObject(written)) return undefined;
  const cached = plans.get(written);
  if (cached !== undefined) return cached ?? undefined;
  const followed = new Set(seen);
  const schema = resolveLocalRef(root, written, followed);
  let plan: NullPlan | undefined;
  if (isObject(schema) && isObject(schema.properties)) {
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const optional = new Set<string>();
    const children = new Map<string, NullPlan>();
    for (const name of Object.keys(schema.properties)) {
      if (!required.has(name)) optional.add(name);
      const child = planOf(schema.properties[name], root, followed);
      if (child !== undefined) children.set(name, child);
    }
    plan = { optional, children };
  } else if (isObject(schema) && isObject(schema.items)) {
    const items = planOf(schema.items, root, followed);
    if (items !== undefined) plan = { optional: new Set(), children: new Map(), items };
  }
  plans.set(written, plan ?? null);
  return plan;
}

function strip(plan: NullPlan, value: Json): Json {
  if (Array.isArray(value)) {
    if (plan.items === undefined) return value;
    let out: Json[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = strip(plan.items, value[i]);
      if (next !== value[i]) {
        out ??= value.slice();
        out[i] = next;
      }
    }
    return out ?? value;
  }
  if (!isObject(value)) return value;
  let out: JsonObject | undefined;
  // for-in, not Object.keys: no array per call on the hot path; JSON objects have no enumerable inherited keys.
  for (const key in value) {
    const field = value[key];
    if (field === null) {
      if (plan.optional.has(key)) {
        out ??= { ...value };
        delete out[key];
      }
      continue;
    }
    if (typeof field !== 'object') continue;
    const child = plan.children.get(key);
    if (child === undefined) continue;
    const next = strip(child, field);
    if (next !== field) {
      out ??= { ...value };
      // A JSON key `__proto__` is an own field: assigning it would set the prototype instead.
      Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true });
    }
  }
  return out ?? value;
}

/**
 * Leaves out every optional body field whose value is `null`, at any depth, since the model-facing definition
 * lists optional fields as required-and-nullable and `null` means "not given". Required fields keep their `null`
 * (validation then judges it). The caller's object is never changed: what changes is copied.
 */
export function dropOptionalNulls(schema: JsonSchema | undefined, body: JsonObject): JsonObject {
  const plan = planOf(schema, schema as Json, new Set());
  return plan === undefined ? body : (strip(plan, body) as JsonObject);
}
