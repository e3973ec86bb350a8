-- mt: compatible-from 22 (expand: a new table, nullable columns and a widened check; a release before it finds no person's session, since it joins each session to its key, and writes key and system audit rows only)
-- Maitento schema, version 26: people signed in through single sign-on (docs/sso.md). A person is known by the
-- issuer and subject of their OpenID Connect provider; `mt_people` keeps the name and email shown for them. A console
-- session is a key's (`key_id`) or a person's (`person_id`, with the role the provider's claims mapped to in each
-- namespace, `roles`, and the namespace the console shows, `namespace`). The audit log records people as actors.
CREATE TABLE mt_people (
  id uuid PRIMARY KEY,
  issuer text NOT NULL,
  subject text NOT NULL,
  name text,
  email text,
  created_at timestamptz NOT NULL DEFAULT now(),
  signed_in_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (issuer, subject)
);
ALTER TABLE mt_console_sessions ALTER COLUMN key_id DROP NOT NULL;
ALTER TABLE mt_console_sessions ADD COLUMN person_id uuid REFERENCES mt_people (id) ON DELETE CASCADE;
ALTER TABLE mt_console_sessions ADD COLUMN roles jsonb;
ALTER TABLE mt_console_sessions ADD COLUMN namespace text;
ALTER TABLE mt_console_sessions ADD CONSTRAINT mt_console_sessions_key_or_person
  CHECK ((key_id IS NULL) <> (person_id IS NULL));
CREATE INDEX mt_console_sessions_person ON mt_console_sessions (person_id);
ALTER TABLE mt_audit DROP CONSTRAINT mt_audit_actor_kind_check;
ALTER TABLE mt_audit ADD CONSTRAINT mt_audit_actor_kind_check CHECK (actor_kind IN ('key', 'person', 'system'));
