import type { Static } from 'typebox';
import type { RequestOptions } from '../client.js';
import { path } from '../core/path.js';
import type {
  CreateFileSystemBodySchema,
  FileInfoSchema,
  FilePageSchema,
  FileSystemSchema,
  ListFilesQuerySchema,
  MoveFileBodySchema,
  WriteFileBodySchema,
} from '../wire/files.js';
import { APIResource } from './resource.js';

/** A file system of the namespace: `id` is what a run binds as `fileSystemId`. */
export type FileSystem = Static<typeof FileSystemSchema>;
/** A file without its content: path, size, content type, ETag, times. */
export type FileInfo = Static<typeof FileInfoSchema>;
/** One page of files in byte order of their paths; `nextCursor` is null on the last one. */
export type FilePage = Static<typeof FilePageSchema>;
/** What `mt.fileSystems.create` takes. */
export type CreateFileSystemParams = Static<typeof CreateFileSystemBodySchema>;
/** What `mt.fileSystems.listFiles` takes: a path prefix, a page size, the cursor of the page before. */
export type ListFilesParams = Static<typeof ListFilesQuerySchema>;
/** What `mt.fileSystems.move` takes. */
export type MoveFileParams = Static<typeof MoveFileBodySchema>;
/** What `mt.fileSystems.writeText` takes (the JSON form a tool sends). */
export type WriteTextParams = Static<typeof WriteFileBodySchema>;

/** What a file write may require of the file it replaces. */
export interface WriteFileOptions extends RequestOptions {
  /** Stored with the file and served back; default application/octet-stream. */
  contentType?: string;
  /** Write only over the file at this ETag (`*`: over any existing file). */
  ifMatch?: string;
  /** Write only when no file is at the path yet. */
  ifNoneMatch?: boolean;
}

/** A file read back: its bytes, with its content type and ETag. */
export interface FileContent {
  content: Uint8Array;
  contentType: string;
  etag: string;
  /** The content as UTF-8 text. */
  text(): string;
}

// A file's path is one parameter of the URL: `/` is sent as %2F, and the server reads the whole path.
const filePath = (id: string, file: string) => path`/v1/file-systems/${id}/files/${file}`;

/** `mt.fileSystems`: file systems of the namespace and their files by path (text or binary). */
export class FileSystems extends APIResource {
  /** Creates a file system (an admin key). */
  async create(params: CreateFileSystemParams, options?: RequestOptions): Promise<FileSystem> {
    return this.client.request({ method: 'POST', path: '/v1/file-systems', body: params }, options);
  }

  /** The file systems of the namespace, by name. */
  async list(options?: RequestOptions): Promise<FileSystem[]> {
    return this.client.request({ method: 'GET', path: '/v1/file-systems' }, options);
  }

  /** One file system, with how many files and bytes it holds. */
  async get(id: string, options?: RequestOptions): Promise<FileSystem> {
    return this.client.request({ method: 'GET', path: path`/v1/file-systems/${id}` }, options);
  }

  /** Deletes a file system and every file in it (an admin key). */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.client.request({ method: 'DELETE', path: path`/v1/file-systems/${id}` }, options);
  }

  /** One page of the files whose path starts with `prefix`; pass `nextCursor` back as `cursor` for the next. */
  async listFiles(id: string, params: ListFilesParams = {}, options?: RequestOptions): Promise<FilePage> {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, String(value));
    const search = query.size === 0 ? '' : `?${query}`;
    return this.client.request({ method: 'GET', path: `${path`/v1/file-systems/${id}/files`}${search}` }, options);
  }

  /** Every file whose path starts with `prefix`, page after page. */
  async *iterFiles(id: string, params: Omit<ListFilesParams, 'cursor'> = {}, options?: RequestOptions) {
    let cursor: string | undefined;
    do {
      const page = await this.listFiles(id, { ...params, cursor }, options);
      yield* page.files;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  /** Creates or replaces the file at `file` with `content` (text is sent as UTF-8). */
  async write(
    id: string,
    file: string,
    content: Uint8Array | string,
    options: WriteFileOptions = {},
  ): Promise<FileInfo> {
    const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/octet-stream' };
    if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch;
    if (options.ifNoneMatch) headers['if-none-match'] = '*';
    const response = await this.client.requestRaw(
      { method: 'PUT', path: filePath(id, file), body: content, headers },
      options,
    );
    return (await response.json()) as FileInfo;
  }

  /** Creates or replaces a text file from JSON, as a tool does. */
  async writeText(id: string, params: WriteTextParams, options?: RequestOptions): Promise<FileInfo> {
    return this.client.request({ method: 'POST', path: path`/v1/file-systems/${id}/files`, body: params }, options);
  }

  /** Reads the file at `file`: its bytes, content type and ETag. */
  async read(id: string, file: string, options?: RequestOptions): Promise<FileContent> {
    const response = await this.client.requestRaw(
      { method: 'GET', path: filePath(id, file), headers: { accept: '*/*' } },
      options,
    );
    const content = new Uint8Array(await response.arrayBuffer());
    return {
      content,
      contentType: response.headers.get('content-type') ?? 'application/octet-stream',
      etag: response.headers.get('etag') ?? '',
      text: () => new TextDecoder().decode(content),
    };
  }

  /** Deletes the file at `file` (only at the ETag `ifMatch` when given). */
  async deleteFile(id: string, file: string, options: RequestOptions & { ifMatch?: string } = {}): Promise<void> {
    const headers: Record<string, string> = options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch };
    const response = await this.client.requestRaw({ method: 'DELETE', path: filePath(id, file), headers }, options);
    await response.body?.cancel();
  }

  /** Moves (renames) a file; a file already at `to` is replaced only with `overwrite: true`. */
  async move(id: string, params: MoveFileParams, options?: RequestOptions): Promise<FileInfo> {
    return this.client.request({ method: 'POST', path: path`/v1/file-systems/${id}/move`, body: params }, options);
  }
}
