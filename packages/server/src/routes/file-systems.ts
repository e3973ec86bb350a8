import { isMtError } from '@maitento/errors';
import type { OperationRequest } from '@maitento/sdk';
import {
  createFileSystem,
  deleteFile,
  deleteFileSystem,
  fileErrors,
  getFile,
  getFileSystem,
  listFiles,
  listFileSystems,
  moveFile,
  putFile,
  type WriteCondition,
} from '@maitento/store';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { ServerContext } from '../internal/context.js';
import { bindAnswer, sendBound } from '../plugins/idempotency.js';
import { operation, responses } from '../schemas/shared.js';

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

/**
 * `/v1/file-systems`: an admin creates and deletes file systems; any key of the namespace (and a platform token,
 * what `auth = "Maitento"` tools send) lists, reads and writes their files by path.
 */
export async function fileSystemRoutes(app: FastifyInstance, ctx: ServerContext): Promise<void> {
  app.post<OperationRequest<'createFileSystem'>>(
    '/file-systems',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('createFileSystem'),
        tags: ['file-systems'],
        summary: 'Create a file system',
        response: responses({ 201: { $ref: 'FileSystem#' } }),
      },
    },
    async (request, reply) => {
      const created = await createFileSystem(ctx.db, request.identity.namespace, request.body);
      return reply.status(201).send(created);
    },
  );

  app.get(
    '/file-systems',
    {
      schema: {
        ...operation('listFileSystems'),
        tags: ['file-systems'],
        summary: 'List the file systems of the namespace',
        response: responses({ 200: { type: 'array', items: { $ref: 'FileSystem#' } } }),
      },
    },
    async (request) => listFileSystems(ctx.db, request.identity.namespace),
  );

  app.get<OperationRequest<'getFileSystem'>>(
    '/file-systems/:id',
    {
      schema: {
        ...operation('getFileSystem'),
        tags: ['file-systems'],
        summary: 'One file system: its name, how many files and bytes it holds',
        response: responses({ 200: { $ref: 'FileSystem#' } }),
      },
    },
    async (request) => getFileSystem(ctx.db, request.identity.namespace, request.params.id),
  );

  app.delete<OperationRequest<'deleteFileSystem'>>(
    '/file-systems/:id',
    {
      config: { role: 'admin' },
      schema: {
        ...operation('deleteFileSystem'),
        tags: ['file-systems'],
        summary: 'Delete a file system and every file in it',
        response: responses({ 204: { type: 'null' } }),
      },
    },
    async (request, reply) => {
      await deleteFileSystem(ctx.db, request.identity.namespace, request.params.id);
      return reply.status(204).send();
    },
  );

  app.get<OperationRequest<'listFiles'>>(
    '/file-systems/:id/files',
    {
      schema: {
        ...operation('listFiles'),
        tags: ['file-systems'],
        summary: 'List files by path prefix, a page at a time (byte order of the paths)',
        response: responses({ 200: { $ref: 'FilePage#' } }),
      },
    },
    async (request) => listFiles(ctx.db, request.identity.namespace, request.params.id, request.query),
  );

  app.post<OperationRequest<'writeFile'>>(
    '/file-systems/:id/files',
    {
      schema: {
        ...operation('writeFile'),
        tags: ['file-systems'],
        summary: 'Create or replace a text file from JSON (what a tool sends)',
        response: responses({ 200: { $ref: 'FileInfo#' }, 201: { $ref: 'FileInfo#' } }),
      },
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

  app.post<OperationRequest<'moveFile'>>(
    '/file-systems/:id/move',
    {
      schema: {
        ...operation('moveFile'),
        tags: ['file-systems'],
        summary: 'Move (rename) a file; a file already at the target is replaced only with overwrite',
        response: responses({ 200: { $ref: 'FileInfo#' } }),
      },
    },
    async (request) => moveFile(ctx.db, request.identity.namespace, request.params.id, request.body),
  );

  app.get<OperationRequest<'getFile'>>(
    '/file-systems/:id/files/*',
    {
      schema: {
        ...operation('getFile'),
        tags: ['file-systems'],
        summary: 'Read a file: its bytes, with its Content-Type and ETag',
        response: responses({ 200: { type: 'string', format: 'binary', description: 'The file' } }),
      },
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

  app.delete<OperationRequest<'deleteFile'>>(
    '/file-systems/:id/files/*',
    {
      schema: {
        ...operation('deleteFile'),
        tags: ['file-systems'],
        summary: 'Delete a file (optionally only at the ETag of If-Match)',
        response: responses({ 204: { type: 'null' } }),
      },
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
    files.put<OperationRequest<'putFile'>>(
      '/file-systems/:id/files/*',
      {
        bodyLimit: ctx.fileLimits.maxFileBytes,
        schema: {
          ...operation('putFile'),
          tags: ['file-systems'],
          summary: 'Create or replace a file: the body is the file (text or binary), optionally at an ETag (If-Match)',
          response: responses({ 200: { $ref: 'FileInfo#' }, 201: { $ref: 'FileInfo#' } }),
        },
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
