import { isMtError } from '@maitento/errors';
import {
  CreateFileSystemBodySchema,
  FileParamsSchema,
  IdParamsSchema,
  ListFilesQuerySchema,
  MoveFileBodySchema,
  WriteFileBodySchema,
} from '@maitento/sdk';
import {
  createFileSystem,
  deleteFile,
  deleteFileSystem,
  fileErrors,
  getFile,
  getFileSystem,
  listFileSystems,
  listFiles,
  moveFile,
  putFile,
  type WriteCondition,
} from '@maitento/store';
import type { FastifyError, FastifyRequest } from 'fastify';
import { operation } from '../openapi/operation.js';
import type { Api, WireTypes } from '../schemas/shared.js';
import type { ServerContext } from '../server/context.js';
import { bindAnswer, sendBound } from '../plugins/idempotency.js';

// Files are bytes: the body of a PUT is the file, whatever its Content-Type (JSON included), up to the file
// limit. A file served back must not run as a page of this origin, whatever type it was written with.
const SERVED_FILE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "sandbox; default-src 'none'",
};

/** An If-Match or If-None-Match header as a list of entity tags (`*` kept as is). */
function entityTags(header: string | string[] | undefined): string[] | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join(',') : header;
  return text
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
}

function writeCondition(request: FastifyRequest): WriteCondition {
  const ifMatch = entityTags(request.headers['if-match']);
  const ifNoneMatch = entityTags(request.headers['if-none-match']);
  return { ifMatch, ifNoneMatch: ifNoneMatch?.includes('*') === true };
}

/** The media type a file was sent with (without nothing: application/octet-stream), at most 255 characters. */
function contentTypeOf(request: FastifyRequest): string | undefined {
  const type = request.headers['content-type']?.trim();
  return type === undefined || type === '' ? undefined : type.slice(0, 255);
}

/** What the two ways of writing a file (JSON text, raw bytes) answer alike. */
const FILE_WRITTEN = {
  response: { 200: { $ref: 'FileInfo#' }, 201: { $ref: 'FileInfo#' } },
  ok: 'The file was replaced',
  created: 'The file was created',
  errors: [
    'api:file-systems:not-found',
    'api:files:path-invalid',
    'api:files:precondition-failed',
    'api:files:too-large',
    'api:file-systems:full',
  ],
};

/**
 * `/v1/file-systems`: an admin creates and deletes file systems; any key of the namespace (and a platform token,
 * what `auth = "Maitento"` tools send) lists, reads and writes their files by path.
 */
export async function fileSystemRoutes(app: Api, ctx: ServerContext): Promise<void> {
  app.post(
    '/file-systems',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'createFileSystem',
        tags: ['file-systems'],
        summary: 'Create a file system',
        description:
          'Creates an empty file system of the namespace, which runs read and write through file tools (admin key).',
        body: CreateFileSystemBodySchema,
        response: { 201: { $ref: 'FileSystem#' } },
        ok: 'The file system',
        errors: ['api:file-systems:exists'],
        examples: { body: { name: 'reports', description: 'Monthly reports the support agent writes' } },
      }),
    },
    async (request, reply) => {
      const created = await createFileSystem(ctx.db, request.identity.namespace, request.body);
      return reply.status(201).send(created);
    },
  );

  app.get(
    '/file-systems',
    {
      schema: operation({
        operationId: 'listFileSystems',
        tags: ['file-systems'],
        summary: 'List the file systems of the namespace',
        description: 'Lists the file systems of the namespace, with how many files and bytes each holds.',
        response: { 200: { type: 'array', items: { $ref: 'FileSystem#' } } },
        ok: 'The file systems',
        errors: [],
      }),
    },
    async (request) => listFileSystems(ctx.db, request.identity.namespace),
  );

  app.get(
    '/file-systems/:id',
    {
      schema: operation({
        operationId: 'getFileSystem',
        tags: ['file-systems'],
        summary: 'One file system: its name, how many files and bytes it holds',
        description: 'Reads one file system: its name, description, and how many files and bytes it holds.',
        params: IdParamsSchema,
        response: { 200: { $ref: 'FileSystem#' } },
        ok: 'The file system',
        errors: ['api:file-systems:not-found'],
      }),
    },
    async (request) => getFileSystem(ctx.db, request.identity.namespace, request.params.id),
  );

  app.delete(
    '/file-systems/:id',
    {
      config: { role: 'admin' },
      schema: operation({
        operationId: 'deleteFileSystem',
        tags: ['file-systems'],
        summary: 'Delete a file system and every file in it',
        description: 'Deletes a file system and every file in it (admin key).',
        params: IdParamsSchema,
        response: { 204: { type: 'null' } },
        ok: 'The file system was deleted',
        errors: ['api:file-systems:not-found'],
      }),
    },
    async (request, reply) => {
      await deleteFileSystem(ctx.db, request.identity.namespace, request.params.id);
      return reply.status(204).send();
    },
  );

  app.get(
    '/file-systems/:id/files',
    {
      config: { role: 'run' },
      schema: operation({
        operationId: 'listFiles',
        tags: ['file-systems'],
        summary: 'List files by path prefix, a page at a time (byte order of the paths)',
        description:
          'Lists the files of a file system under a path prefix, a page at a time in byte order of their paths: pass ' +
          'the nextCursor of a page as cursor to get the next.',
        params: IdParamsSchema,
        querystring: ListFilesQuerySchema,
        response: { 200: { $ref: 'FilePage#' } },
        ok: 'One page of files (without their content) and the cursor of the next',
        errors: ['api:file-systems:not-found', 'api:files:cursor-invalid', 'api:files:path-invalid'],
      }),
    },
    async (request) => listFiles(ctx.db, request.identity.namespace, request.params.id, request.query),
  );

  app.post(
    '/file-systems/:id/files',
    {
      config: { role: 'run' },
      schema: operation({
        operationId: 'writeFile',
        tags: ['file-systems'],
        summary: 'Create or replace a text file from JSON (what a tool sends)',
        description:
          'Creates or replaces a text file from JSON, as a file tool sends it; with ifMatch, only over the file at ' +
          'that ETag. 201 when the file is new, 200 when it replaced one.',
        params: IdParamsSchema,
        body: WriteFileBodySchema,
        ...FILE_WRITTEN,
        examples: {
          body: {
            path: 'reports/2026-03.md',
            content: '# March\n\n41 orders refunded.\n',
            contentType: 'text/markdown',
          },
        },
      }),
    },
    async (request, reply) => {
      const { path, content, contentType, ifMatch } = request.body;
      let body = '';
      const { file, created } = await putFile(
        ctx.db,
        request.identity.namespace,
        request.params.id,
        {
          path,
          content: Buffer.from(content, 'utf8'),
          contentType: contentType ?? 'text/plain; charset=utf-8',
          condition: ifMatch === undefined ? {} : { ifMatch: [ifMatch] },
        },
        ctx.fileLimits,
        // The answer commits with the request's Idempotency-Key (decision 0102).
        async (tx, result) => {
          body = await bindAnswer(tx, reply, result.created ? 201 : 200, result.file);
        },
      );
      return sendBound(reply.status(created ? 201 : 200).header('etag', file.etag), body);
    },
  );

  app.post(
    '/file-systems/:id/move',
    {
      config: { role: 'run' },
      schema: operation({
        operationId: 'moveFile',
        tags: ['file-systems'],
        summary: 'Move (rename) a file; a file already at the target is replaced only with overwrite',
        description:
          'Moves (renames) a file within its file system; a file already at the target is replaced only with overwrite.',
        params: IdParamsSchema,
        body: MoveFileBodySchema,
        response: { 200: { $ref: 'FileInfo#' } },
        ok: 'The file at its new path',
        errors: ['api:file-systems:not-found', 'api:files:not-found', 'api:files:exists', 'api:files:path-invalid'],
        examples: {
          body: { from: 'reports/draft.md', to: 'reports/2026-03.md', overwrite: false },
        },
      }),
    },
    async (request) => moveFile(ctx.db, request.identity.namespace, request.params.id, request.body),
  );

  app.get(
    '/file-systems/:id/files/*',
    {
      config: { role: 'run' },
      schema: operation({
        operationId: 'getFile',
        tags: ['file-systems'],
        summary: 'Read a file: its bytes, with its Content-Type and ETag',
        description: 'Reads a file: its bytes as stored, with its Content-Type and ETag headers.',
        params: FileParamsSchema,
        response: {
          200: { description: 'The file', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
          304: { type: 'null', description: 'Not Modified: the file still has the ETag If-None-Match names' },
        },
        ok: 'The bytes of the file',
        errors: ['api:file-systems:not-found', 'api:files:not-found', 'api:files:path-invalid'],
        examples: { oks: { '*/*': '# March\n\n41 orders refunded.\n' } },
      }),
    },
    async (request, reply) => {
      const file = await getFile(ctx.db, request.identity.namespace, request.params.id, request.params['*']);
      reply.headers({
        ...SERVED_FILE_HEADERS,
        etag: file.etag,
        'last-modified': new Date(file.updatedAt).toUTCString(),
      });
      if (entityTags(request.headers['if-none-match'])?.includes(file.etag)) return reply.status(304).send();
      return reply.type(file.contentType).send(file.content);
    },
  );

  app.delete(
    '/file-systems/:id/files/*',
    {
      config: { role: 'run' },
      schema: operation({
        operationId: 'deleteFile',
        tags: ['file-systems'],
        summary: 'Delete a file (optionally only at the ETag of If-Match)',
        description: 'Deletes a file; with If-Match, only the file at that ETag.',
        params: FileParamsSchema,
        response: { 204: { type: 'null' } },
        ok: 'The file was deleted',
        errors: [
          'api:file-systems:not-found',
          'api:files:not-found',
          'api:files:path-invalid',
          'api:files:precondition-failed',
        ],
      }),
    },
    async (request, reply) => {
      const { namespace } = request.identity;
      await deleteFile(ctx.db, namespace, request.params.id, request.params['*'], writeCondition(request));
      return reply.status(204).send();
    },
  );

  // The PUT takes any body as the file's bytes: its own content-type parsers, its own size limit and code.
  await app.register(async (files) => {
    files.removeAllContentTypeParsers();
    files.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    files.setErrorHandler((error: FastifyError) => {
      if (!isMtError(error) && error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        throw fileErrors.create('api:files:too-large', { limit: ctx.fileLimits.maxFileBytes });
      }
      throw error;
    });
    files.withTypeProvider<WireTypes>().put(
      '/file-systems/:id/files/*',
      {
        bodyLimit: ctx.fileLimits.maxFileBytes,
        schema: operation({
          operationId: 'putFile',
          rawBody: {
            types: ['*/*'],
            description: 'The file, as it is stored (its Content-Type is stored with it)',
          },
          tags: ['file-systems'],
          summary: 'Create or replace a file: the body is the file (text or binary), optionally at an ETag (If-Match)',
          description:
            'Creates or replaces a file with the request body as its bytes (any type, text or binary; its Content-Type ' +
            'is stored); with If-Match, only over the file at that ETag. 201 when the file is new, 200 when it replaced one.',
          params: FileParamsSchema,
          ...FILE_WRITTEN,
          examples: { bodies: { '*/*': '# March\n\n41 orders refunded.\n' } },
        }),
      },
      async (request, reply) => {
        const content = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        let body = '';
        const { file, created } = await putFile(
          ctx.db,
          request.identity.namespace,
          request.params.id,
          {
            path: request.params['*'],
            content,
            contentType: contentTypeOf(request),
            condition: writeCondition(request),
          },
          ctx.fileLimits,
          async (tx, result) => {
            body = await bindAnswer(tx, reply, result.created ? 201 : 200, result.file);
          },
        );
        return sendBound(reply.status(created ? 201 : 200).header('etag', file.etag), body);
      },
    );
  });
}
