// The answers of the key, namespace, secret-key and tool-call routes, declared once like ./schemas.ts.
import { Type } from 'typebox';
import { timestamp, uuid } from './formats.js';
import { type Json, KEY_ROLES, ref, stringEnum } from './schemas.js';

const keyProperties = {
  id: uuid(),
  name: Type.Union([Type.String(), Type.Null()]),
  role: stringEnum(KEY_ROLES),
  secrets: Type.Array(uuid(), {
    description:
      'The ids of the secrets granted to the key when it was made: a user key names only these in a run (an admin key any)',
  }),
  createdAt: timestamp(),
};

/** An API key as listed: never the key itself. */
export const KeyInfoSchema = Type.Object(keyProperties, { $id: 'KeyInfo' });

/** A key just created: `key` is shown in this answer only. */
export const CreatedKeySchema = Type.Object({ ...keyProperties, key: Type.String() }, { $id: 'CreatedKey' });

/** A namespace just created, with its first admin key. */
export const CreatedNamespaceSchema = Type.Object(
  {
    name: Type.String(),
    key: Type.Object({ id: uuid(), key: Type.String(), role: stringEnum(['admin']) }),
  },
  { $id: 'CreatedNamespace' },
);

/** The answer of one tool call through the gateway. */
export const ExtopCallResultSchema = Type.Object(
  {
    ok: Type.Boolean(),
    status: Type.Optional(Type.Integer()),
    body: Type.Optional(Type.Unsafe<Json>({})),
    truncated: Type.Optional(
      Type.Object(
        { limit: Type.Integer(), size: Type.Optional(Type.Integer()) },
        { description: 'Set when the body was cut at `limit` bytes; `size` is the whole size when declared' },
      ),
    ),
    error: Type.Optional(Type.String()),
    code: Type.Optional(Type.String()),
  },
  { $id: 'ExtopCallResult' },
);

/** Which master key ids the stored secrets (of every namespace) are under. */
export const SecretKeyStatusSchema = Type.Object(
  {
    currentKeyId: Type.String({ description: 'The master key new secrets are wrapped under (MT_SECRET_KEY)' }),
    secretsByKeyId: Type.Unsafe<Record<string, number>>({
      type: 'object',
      additionalProperties: { type: 'integer' },
      description: 'How many sealed values (secrets, connection tokens and connect links) each master key id holds',
    }),
    unusedPreviousKeyIds: Type.Array(Type.String(), {
      description: 'Keys of MT_SECRET_KEY_PREVIOUS no sealed value is under any more: they can be retired',
    }),
  },
  { $id: 'SecretKeyStatus' },
);

/** What a master key rotation did, and the status after it. */
export const SecretKeyRotationSchema = Type.Object(
  {
    keyId: Type.String({ description: 'The master key every data key is now wrapped under' }),
    rewrapped: Type.Integer({ description: 'Data keys re-wrapped by this call (values untouched)' }),
    converted: Type.Integer({ description: 'Secrets stored before envelope encryption, converted by this call' }),
    batches: Type.Integer({ description: 'Batches committed' }),
    status: ref(SecretKeyStatusSchema),
  },
  { $id: 'SecretKeyRotation' },
);
