-- mt: compatible-from 22 (expand: two nullable columns; a release before it never edits, and its worker would refuse an edited approval's call with api:approvals:request-changed, nothing sent)
-- Maitento schema, version 23: edit, then approve (decision 0215). A person who approves may change the arguments
-- the model chose: `edited_arguments` holds the model-settable arguments the approved call is made with (null: the
-- model's own), `edited_by` the key that last changed them; `arguments_json` and `request_hash` then describe the
-- edited call.
ALTER TABLE mt_approvals ADD COLUMN edited_arguments jsonb, ADD COLUMN edited_by jsonb;
