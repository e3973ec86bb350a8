-- mt: compatible-from 11 (expand: new tables)
-- Maitento schema, version 12: file systems, files by path (issue #28). A file system belongs to one namespace;
-- `bytes` is the sum of its files' sizes, kept in the same transaction as every write, under the file system's row
-- lock, so the per-file-system limit is checked against what is really stored. Paths sort byte-wise (COLLATE "C"),
-- so listing by prefix with a cursor walks the primary key in order.
CREATE TABLE mt_file_systems (
  id uuid PRIMARY KEY,
  namespace text NOT NULL REFERENCES mt_namespaces (name) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  bytes bigint NOT NULL DEFAULT 0,
  files integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (namespace, name)
);

CREATE TABLE mt_files (
  file_system_id uuid NOT NULL REFERENCES mt_file_systems (id) ON DELETE CASCADE,
  path text COLLATE "C" NOT NULL,
  content bytea NOT NULL,
  size bigint NOT NULL,
  content_type text NOT NULL,
  etag text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (file_system_id, path)
);
