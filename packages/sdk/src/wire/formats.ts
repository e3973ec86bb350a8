// The string formats of the wire's records, declared once: every timestamp and every record id.
import { Type } from 'typebox';

/** A moment, as the server sends it: an ISO 8601 date-time in UTC (`2026-05-01T12:00:00.000Z`). */
export const timestamp = (description?: string) =>
  Type.String({ format: 'date-time', ...(description === undefined ? {} : { description }) });

/** The id of a stored record (a run, approval, key, secret, file system, knowledge base or document). */
export const uuid = (description?: string) =>
  Type.String({ format: 'uuid', ...(description === undefined ? {} : { description }) });
