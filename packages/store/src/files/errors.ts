import { defineErrors } from '@maitento/errors';

/** Errors of file systems and their files (docs/file-systems.md). */
export const fileErrors = defineErrors({
  'api:file-systems:not-found': {
    status: 404,
    message: 'No file system {id} in this namespace',
    hint: 'List the file systems of the namespace with `mt fs-ls`; a deleted one is gone with its files',
  },
  'api:file-systems:exists': {
    status: 409,
    message: 'A file system named {name} already exists in this namespace',
  },
  'api:file-systems:full': {
    status: 413,
    message: 'File system {id} would hold {bytes} bytes, more than its limit of {limit} bytes; nothing was written',
    hint: 'Delete files it no longer needs; MT_FILE_SYSTEM_MAX_BYTES sets the limit',
  },
  'api:files:too-large': {
    status: 413,
    message: 'The file is larger than {limit} bytes, the most one file may hold; nothing was written',
    hint: 'MT_FILE_MAX_BYTES sets the limit',
  },
  'api:files:path-invalid': {
    status: 400,
    message: 'The path {path} is not valid: {reason}',
    hint: 'A path is relative to the file system, like notes/2026-12-01.md: no leading /, no .. segment',
  },
  'api:files:not-found': { status: 404, message: 'No file {path} in file system {id}' },
  'api:files:exists': {
    status: 409,
    message: 'A file {path} already exists in file system {id}; nothing was moved',
    hint: 'Send "overwrite": true to replace it',
  },
  'api:files:precondition-failed': {
    status: 412,
    message: 'The file {path} is not as the request expects ({condition}); nothing was written',
    hint: 'Read the file again (GET) and retry with its current ETag',
  },
  'api:files:cursor-invalid': {
    status: 400,
    message: 'The cursor is not one this server gave',
    hint: 'Pass the nextCursor of the previous page unchanged, or no cursor for the first page',
  },
});
