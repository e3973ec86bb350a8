// OAuth 2 connections per end user (docs/connections.md), declared once like ./files.ts: the answers (with an `$id`,
// published as components) and what requests carry (inline in their operations). No shape here holds a token.
import { type Static, Type } from 'typebox';
import { CONNECTION_STATUSES } from './constants.js';
import { timestamp, uuid } from './formats.js';
import { stringEnum } from './schemas.js';

const endUser = Type.String({
  minLength: 1,
  maxLength: 256,
  description: "Your application's id of the person (any text of 1 to 256 characters): who the connection acts for",
});

/** One end user's authorisation at one auth provider: its state and scopes, never its tokens. */
export const ConnectionSchema = Type.Object(
  {
    id: uuid(),
    provider: Type.String({ description: 'The auth provider (auth-providers/<name>.mtr)' }),
    endUser,
    status: stringEnum(CONNECTION_STATUSES),
    scopes: Type.Array(Type.String(), { description: 'The scopes the provider granted' }),
    hasRefreshToken: Type.Boolean({ description: 'Whether the provider gave a refresh token' }),
    accessTokenExpiresAt: Type.Union([timestamp(), Type.Null()], {
      description: 'When the access token expires, as the provider said (null: it did not say)',
    }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  },
  { $id: 'Connection', description: "One end user's authorisation at one auth provider (never its tokens)" },
);

/** A connect link: the URL an end user opens to authorise, once, before `expiresAt`. */
export const ConnectLinkSchema = Type.Object(
  {
    id: uuid(),
    url: Type.String({ description: "The provider's authorization URL to hand the end user (single use)" }),
    provider: Type.String(),
    endUser,
    scopes: Type.Array(Type.String(), { description: 'The scopes asked for' }),
    expiresAt: timestamp(),
  },
  { $id: 'ConnectLink', description: 'The URL an end user opens to connect an account, once, before it expires' },
);

/** The body of `POST /v1/connections/links`. */
export const CreateConnectLinkBodySchema = Type.Object(
  {
    provider: Type.String({ minLength: 1, maxLength: 200, description: 'The auth provider, by name' }),
    endUser,
    scopes: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+$' }), {
        maxItems: 50,
        description: "Scopes to ask for besides the provider's own",
      }),
    ),
    returnUrl: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description: 'Where the callback sends the end user afterwards (http or https), with connection or error added',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The query of `GET /v1/connections`. */
export const ListConnectionsQuerySchema = Type.Object(
  {
    provider: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    endUser: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: false },
);

/** The schemas of connections with an `$id`, in the order a server adds them. */
export const connectionWireSchemas = [ConnectionSchema, ConnectLinkSchema] as const;

/** One end user's authorisation at one auth provider (never its tokens). */
export type Connection = Static<typeof ConnectionSchema>;
/** A connect link: the URL to hand the end user. */
export type ConnectLink = Static<typeof ConnectLinkSchema>;
/** Parameters of `mt.connections.createLink`. */
export type CreateConnectLinkParams = Static<typeof CreateConnectLinkBodySchema>;
/** Filters of `mt.connections.list`. */
export type ListConnectionsParams = Static<typeof ListConnectionsQuerySchema>;
