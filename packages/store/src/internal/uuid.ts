const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` is a UUID (GUID) in its usual text form. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
