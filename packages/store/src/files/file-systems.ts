import { createHash, randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../db/db.js';
import { bytes, isUniqueViolation, iso } from '../internal/rows.js';
import { isUuid } from '../internal/uuid.js';
import { fileErrors } from './errors.js';

/** The default limits of a file and of a file system, in bytes (MT_FILE_MAX_BYTES, MT_FILE_SYSTEM_MAX_BYTES). */
export const DEFAULT_FILE_LIMITS: FileLimits = { maxFileBytes: 10 * 1024 * 1024, maxFileSystemBytes: 1024 ** 3 };

/** The longest path, in UTF-8 bytes. */
export const MAX_PATH_BYTES = 1024;

/** How large one file and all the files of one file system may be, in bytes. */
export interface FileLimits {
  maxFileBytes: number;
  maxFileSystemBytes: number;
}

/** A file system as the API shows it. */
export interface FileSystemInfo {
  id: string;
  name: string;
  description: string;
  /** How many files it holds. */
  files: number;
  /** The sum of its files' sizes. */
  bytes: number;
  createdAt: string;
}

/** A file as listed: everything but its content. */
export interface FileInfo {
  path: string;
  size: number;
  contentType: string;
  /** A strong ETag (quoted), the same for the same content. */
  etag: string;
  createdAt: string;
  updatedAt: string;
}

/** A file with its content. */
export interface StoredFile extends FileInfo {
  content: Buffer;
}

/** One page of files in path order; `nextCursor` is null on the last one. */
export interface FilePage {
  files: FileInfo[];
  nextCursor: string | null;
}

interface FileSystemRow {
  id: string;
  name: string;
  description: string;
  files: number | string;
  bytes: number | string | bigint;
  created_at: Date;
}

interface FileRow {
  path: string;
  size: number | string | bigint;
  content_type: string;
  etag: string;
  created_at: Date;
  updated_at: Date;
  content?: unknown;
}

const FS_COLUMNS = 'id, name, description, files, bytes, created_at';
const FILE_COLUMNS = 'path, size, content_type, etag, created_at, updated_at';

function fileSystemInfo(row: FileSystemRow): FileSystemInfo {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    files: Number(row.files),
    bytes: Number(row.bytes),
    createdAt: iso(row.created_at),
  };
}

function fileInfo(row: FileRow): FileInfo {
  return {
    path: row.path,
    size: Number(row.size),
    contentType: row.content_type,
    etag: row.etag,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

function notFound(id: string) {
  return fileErrors.create('api:file-systems:not-found', { id });
}

function invalidPath(path: string, reason: string) {
  return fileErrors.create('api:files:path-invalid', { path: JSON.stringify(path), reason });
}

// Control characters (PostgreSQL text cannot hold NUL) and backslashes (a Windows separator: `a\..\b`).
const FORBIDDEN = /[\u0000-\u001f\u007f\\]/;

/**
 * The normal form of a file's path: NFC, without empty and `.` segments (`a//./b` is `a/b`). A path that starts
 * with `/`, holds a `..` segment, a control character or a backslash, is empty, or is longer than
 * {@link MAX_PATH_BYTES}, is `api:files:path-invalid`.
 */
export function normalizeFilePath(path: string): string {
  if (path.startsWith('/')) throw invalidPath(path, 'it is absolute; paths are relative to the file system');
  if (FORBIDDEN.test(path)) throw invalidPath(path, 'it holds a control character or a backslash');
  const segments = path.normalize('NFC').split('/');
  if (segments.includes('..')) throw invalidPath(path, 'it holds a .. segment');
  const normal = segments.filter((segment) => segment !== '' && segment !== '.').join('/');
  if (normal === '') throw invalidPath(path, 'it names no file');
  if (Buffer.byteLength(normal) > MAX_PATH_BYTES) throw invalidPath(path, `it is longer than ${MAX_PATH_BYTES} bytes`);
  return normal;
}

/** A listing prefix: NFC, refused as a path is when it is absolute or holds `..`; empty lists everything. */
function normalizePrefix(prefix: string): string {
  if (prefix === '') return '';
  if (prefix.startsWith('/')) throw invalidPath(prefix, 'it is absolute; paths are relative to the file system');
  if (FORBIDDEN.test(prefix)) throw invalidPath(prefix, 'it holds a control character or a backslash');
  const normal = prefix.normalize('NFC');
  if (normal.split('/').includes('..')) throw invalidPath(prefix, 'it holds a .. segment');
  return normal.replace(/^(\.\/)+/, '');
}

/** The strong ETag of `content`: its SHA-256, quoted. */
export function etagOf(content: Buffer): string {
  return `"${createHash('sha256').update(content).digest('base64url')}"`;
}

/** Creates a file system of `namespace`; a name already taken is `api:file-systems:exists`. */
export async function createFileSystem(
  db: Queryable,
  namespace: string,
  input: { name: string; description?: string },
): Promise<FileSystemInfo> {
  try {
    const { rows } = await db.query<FileSystemRow>(
      `INSERT INTO mt_file_systems (id, namespace, name, description) VALUES ($1, $2, $3, $4) RETURNING ${FS_COLUMNS}`,
      [randomUUID(), namespace, input.name, input.description ?? ''],
    );
    return fileSystemInfo(rows[0]);
  } catch (error) {
    if (isUniqueViolation(error)) throw fileErrors.create('api:file-systems:exists', { name: input.name });
    throw error;
  }
}

/** The file systems of `namespace`, in name order. */
export async function listFileSystems(db: Queryable, namespace: string): Promise<FileSystemInfo[]> {
  const { rows } = await db.query<FileSystemRow>(
    `SELECT ${FS_COLUMNS} FROM mt_file_systems WHERE namespace = $1 ORDER BY name`,
    [namespace],
  );
  return rows.map(fileSystemInfo);
}

/** File system `id` of `namespace`; another namespace's id, or a deleted one, is `api:file-systems:not-found`. */
export async function getFileSystem(db: Queryable, namespace: string, id: string): Promise<FileSystemInfo> {
  if (!isUuid(id)) throw notFound(id);
  const { rows } = await db.query<FileSystemRow>(
    `SELECT ${FS_COLUMNS} FROM mt_file_systems WHERE namespace = $1 AND id = $2`,
    [namespace, id],
  );
  if (!rows[0]) throw notFound(id);
  return fileSystemInfo(rows[0]);
}

/** Deletes file system `id` of `namespace` and every file in it. */
export async function deleteFileSystem(db: Queryable, namespace: string, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound(id);
  const { rows } = await db.query('DELETE FROM mt_file_systems WHERE namespace = $1 AND id = $2 RETURNING 1', [
    namespace,
    id,
  ]);
  if (rows.length === 0) throw notFound(id);
}

// Locks the file system's row for the rest of the transaction (every write to it waits here), and returns its bytes.
async function lockFileSystem(tx: Queryable, namespace: string, id: string): Promise<number> {
  if (!isUuid(id)) throw notFound(id);
  const { rows } = await tx.query<{ bytes: number | string }>(
    'SELECT bytes FROM mt_file_systems WHERE namespace = $1 AND id = $2 FOR UPDATE',
    [namespace, id],
  );
  if (!rows[0]) throw notFound(id);
  return Number(rows[0].bytes);
}

// The file system of `namespace` that a read names: it must exist (a deleted one is not found, even when empty).
async function requireFileSystem(db: Queryable, namespace: string, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound(id);
  const { rows } = await db.query('SELECT 1 FROM mt_file_systems WHERE namespace = $1 AND id = $2', [namespace, id]);
  if (rows.length === 0) throw notFound(id);
}

/** What a write expects of the file it replaces (HTTP's If-Match and If-None-Match). */
export interface WriteCondition {
  /** The file must exist with one of these ETags (`*`: with any). */
  ifMatch?: string[];
  /** `*`: the file must not exist yet. */
  ifNoneMatch?: boolean;
}

function checkCondition(path: string, existing: { etag: string } | undefined, condition: WriteCondition): void {
  const { ifMatch, ifNoneMatch } = condition;
  if (ifMatch !== undefined) {
    const matches = existing !== undefined && (ifMatch.includes('*') || ifMatch.includes(existing.etag));
    if (!matches) {
      const condition = existing === undefined ? 'If-Match, and it does not exist' : 'If-Match, and its ETag differs';
      throw fileErrors.create('api:files:precondition-failed', { path, condition });
    }
  }
  if (ifNoneMatch && existing !== undefined) {
    throw fileErrors.create('api:files:precondition-failed', { path, condition: 'If-None-Match: *, and it exists' });
  }
}

/**
 * Creates or replaces the file at `path` in one transaction: the file system's row is locked, the condition and
 * both limits are checked against what is stored, then the file and the file system's totals are written, or
 * nothing is. Returns the file as stored and whether it was created. `onStored`, when given, runs last in the same
 * transaction with that result (a keyed request binds its answer to its Idempotency-Key there: decision 0102).
 */
export async function putFile(
  db: Db,
  namespace: string,
  id: string,
  input: { path: string; content: Buffer; contentType?: string; condition?: WriteCondition },
  limits: FileLimits,
  onStored?: (tx: Queryable, result: { file: FileInfo; created: boolean }) => Promise<void>,
): Promise<{ file: FileInfo; created: boolean }> {
  const path = normalizeFilePath(input.path);
  const size = input.content.length;
  if (size > limits.maxFileBytes) throw fileErrors.create('api:files:too-large', { limit: limits.maxFileBytes });
  const etag = etagOf(input.content);
  return db.transaction(async (tx) => {
    const stored = await lockFileSystem(tx, namespace, id);
    const { rows: old } = await tx.query<{ size: number | string; etag: string }>(
      'SELECT size, etag FROM mt_files WHERE file_system_id = $1 AND path = $2',
      [id, path],
    );
    checkCondition(path, old[0], input.condition ?? {});
    const oldSize = old[0] === undefined ? 0 : Number(old[0].size);
    const total = stored - oldSize + size;
    if (total > limits.maxFileSystemBytes && size > oldSize) {
      throw fileErrors.create('api:file-systems:full', { id, bytes: total, limit: limits.maxFileSystemBytes });
    }
    const { rows } = await tx.query<FileRow>(
      'INSERT INTO mt_files (file_system_id, path, content, size, content_type, etag) VALUES ($1, $2, $3, $4, $5, $6) ' +
        'ON CONFLICT (file_system_id, path) DO UPDATE SET content = EXCLUDED.content, size = EXCLUDED.size, ' +
        `content_type = EXCLUDED.content_type, etag = EXCLUDED.etag, updated_at = now() RETURNING ${FILE_COLUMNS}`,
      [id, path, input.content, size, input.contentType || 'application/octet-stream', etag],
    );
    await tx.query('UPDATE mt_file_systems SET bytes = bytes + $2, files = files + $3 WHERE id = $1', [
      id,
      size - oldSize,
      old[0] === undefined ? 1 : 0,
    ]);
    const result = { file: fileInfo(rows[0]), created: old[0] === undefined };
    await onStored?.(tx, result);
    return result;
  });
}

/** The file at `path`, with its content; `api:files:not-found` when there is none. */
export async function getFile(db: Queryable, namespace: string, id: string, rawPath: string): Promise<StoredFile> {
  const path = normalizeFilePath(rawPath);
  if (!isUuid(id)) throw notFound(id);
  const { rows } = await db.query<FileRow>(
    `SELECT f.path, f.size, f.content_type, f.etag, f.created_at, f.updated_at, f.content FROM mt_file_systems s ` +
      'LEFT JOIN mt_files f ON f.file_system_id = s.id AND f.path = $3 WHERE s.namespace = $1 AND s.id = $2',
    [namespace, id, path],
  );
  if (!rows[0]) throw notFound(id);
  if (rows[0].path === null) throw fileErrors.create('api:files:not-found', { path, id });
  return { ...fileInfo(rows[0]), content: bytes(rows[0].content) };
}

/** Deletes the file at `path` (with an optional If-Match condition), and takes its size off the file system. */
export async function deleteFile(
  db: Db,
  namespace: string,
  id: string,
  rawPath: string,
  condition: WriteCondition = {},
): Promise<void> {
  const path = normalizeFilePath(rawPath);
  await db.transaction(async (tx) => {
    await lockFileSystem(tx, namespace, id);
    const { rows } = await tx.query<{ size: number | string; etag: string }>(
      'SELECT size, etag FROM mt_files WHERE file_system_id = $1 AND path = $2',
      [id, path],
    );
    if (!rows[0]) throw fileErrors.create('api:files:not-found', { path, id });
    checkCondition(path, rows[0], condition);
    await tx.query('DELETE FROM mt_files WHERE file_system_id = $1 AND path = $2', [id, path]);
    await tx.query('UPDATE mt_file_systems SET bytes = bytes - $2, files = files - 1 WHERE id = $1', [
      id,
      Number(rows[0].size),
    ]);
  });
}

/**
 * Moves (renames) the file at `from` to `to` in one transaction. A file already at `to` is `api:files:exists`
 * unless `overwrite`, which replaces it (its size comes off the file system).
 */
export async function moveFile(
  db: Db,
  namespace: string,
  id: string,
  input: { from: string; to: string; overwrite?: boolean },
): Promise<FileInfo> {
  const from = normalizeFilePath(input.from);
  const to = normalizeFilePath(input.to);
  return db.transaction(async (tx) => {
    await lockFileSystem(tx, namespace, id);
    const { rows: source } = await tx.query<{ size: number | string }>(
      'SELECT size FROM mt_files WHERE file_system_id = $1 AND path = $2',
      [id, from],
    );
    if (!source[0]) throw fileErrors.create('api:files:not-found', { path: from, id });
    if (from !== to) {
      const { rows: target } = await tx.query<{ size: number | string }>(
        'DELETE FROM mt_files WHERE file_system_id = $1 AND path = $2 AND $3 RETURNING size',
        [id, to, input.overwrite === true],
      );
      if (target[0]) {
        await tx.query('UPDATE mt_file_systems SET bytes = bytes - $2, files = files - 1 WHERE id = $1', [
          id,
          Number(target[0].size),
        ]);
      } else {
        const { rows: exists } = await tx.query('SELECT 1 FROM mt_files WHERE file_system_id = $1 AND path = $2', [
          id,
          to,
        ]);
        if (exists.length > 0) throw fileErrors.create('api:files:exists', { path: to, id });
      }
    }
    const { rows } = await tx.query<FileRow>(
      `UPDATE mt_files SET path = $3, updated_at = now() WHERE file_system_id = $1 AND path = $2 RETURNING ${FILE_COLUMNS}`,
      [id, from, to],
    );
    return fileInfo(rows[0]);
  });
}

function encodeCursor(path: string): string {
  return Buffer.from(JSON.stringify({ after: path })).toString('base64url');
}

function decodeCursor(cursor: string): string {
  try {
    const { after } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof after === 'string') return after;
  } catch {
    // falls through
  }
  throw fileErrors.create('api:files:cursor-invalid');
}

/** One page of the files whose path starts with `prefix`, in byte order of their paths, after `cursor`. */
export async function listFiles(
  db: Queryable,
  namespace: string,
  id: string,
  options: { prefix?: string; cursor?: string; limit?: number } = {},
): Promise<FilePage> {
  const prefix = normalizePrefix(options.prefix ?? '');
  const after = options.cursor === undefined ? '' : decodeCursor(options.cursor);
  const limit = options.limit ?? 100;
  await requireFileSystem(db, namespace, id);
  const { rows } = await db.query<FileRow>(
    // `path >= prefix` starts the walk of the primary key at the prefix (every path with it sorts there or after).
    `SELECT ${FILE_COLUMNS} FROM mt_files WHERE file_system_id = $1 AND path >= $2 AND starts_with(path, $2) ` +
      'AND path > $3 ORDER BY path LIMIT $4',
    [id, prefix, after, limit + 1],
  );
  const page = rows.slice(0, limit).map(fileInfo);
  const last = page.at(-1);
  return { files: page, nextCursor: rows.length > limit && last ? encodeCursor(last.path) : null };
}
