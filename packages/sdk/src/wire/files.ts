// File systems and their files (docs/file-systems.md), declared once like ./schemas.ts and ./requests.ts: the
// answers (with an `$id`, published as components) and what requests carry (inline in their operations).
import { Type } from 'typebox';
import { timestamp, uuid } from './formats.js';
import { ref } from './schemas.js';

/** A file system of the namespace: its id is what a run binds as `fileSystemId`. */
export const FileSystemSchema = Type.Object(
  {
    id: uuid('What a run binds (fileSystemId) and every file path is under'),
    name: Type.String(),
    description: Type.String(),
    files: Type.Integer({ description: 'How many files it holds' }),
    bytes: Type.Integer({ description: "The sum of its files' sizes" }),
    createdAt: timestamp(),
  },
  { $id: 'FileSystem', description: 'A file system of the namespace: files by path' },
);

/** A file as listed and as written: everything but its content. */
export const FileInfoSchema = Type.Object(
  {
    path: Type.String({ description: 'Normalised, relative to the file system (notes/today.md)' }),
    size: Type.Integer({ description: 'In bytes' }),
    contentType: Type.String({ description: 'The Content-Type it was written with' }),
    etag: Type.String({ description: 'A strong ETag (quoted), for If-Match' }),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  },
  { $id: 'FileInfo', description: 'A file, without its content' },
);

/** One page of files in byte order of their paths; `nextCursor` is null on the last one. */
export const FilePageSchema = Type.Object(
  {
    files: Type.Array(ref(FileInfoSchema)),
    nextCursor: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'FilePage', description: 'One page of files in byte order of their paths' },
);

/** The body of `POST /v1/file-systems`. */
export const CreateFileSystemBodySchema = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' }),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: false },
);

/** The `:id/files/*` path parameters: the file system and the file's path (the rest of the URL). */
export const FileParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  '*': Type.String({ maxLength: 4000 }),
});

/** The query of `GET /v1/file-systems/{id}/files`. */
export const ListFilesQuerySchema = Type.Object(
  {
    prefix: Type.Optional(Type.String({ maxLength: 1024 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description: 'Opaque: the nextCursor of the previous page, unchanged (none for the first page)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The body of `POST /v1/file-systems/{id}/files`: a text file as JSON, what a tool's model can write. */
export const WriteFileBodySchema = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 4000, description: "The file's path, relative to the file system" }),
    content: Type.String({ description: 'The text of the file (stored as UTF-8)' }),
    contentType: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'Default text/plain; charset=utf-8' }),
    ),
    ifMatch: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Write only over the file at this ETag (* : any)' }),
    ),
  },
  { additionalProperties: false },
);

/** The body of `POST /v1/file-systems/{id}/move`. */
export const MoveFileBodySchema = Type.Object(
  {
    from: Type.String({ minLength: 1, maxLength: 4000 }),
    to: Type.String({ minLength: 1, maxLength: 4000 }),
    overwrite: Type.Optional(Type.Boolean({ description: 'Replace a file already at `to` (default false: 409)' })),
  },
  { additionalProperties: false },
);

/** The schemas of file systems with an `$id`, in the order a server adds them. */
export const fileWireSchemas = [FileSystemSchema, FileInfoSchema, FilePageSchema] as const;
