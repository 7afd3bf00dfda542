-- 0005: 512-dimensional embeddings (Universal Sentence Encoder Lite, the embedded default) and
-- the embedder that made each row's vector.
--
-- A 384-dimensional vector cannot be turned into a 512-dimensional one: every stored vector is
-- set to NULL. Such rows are still found by the deterministic filters of context assembly (their
-- distance is NULL, which scoring treats as no semantic evidence) until an operator re-embeds
-- them: `npm run memory -- reembed`.
--
-- embedder: the id of the embedder that made the row's vector (e.g. 'use-lite-512',
-- 'local-hash-v2', 'openai:text-embedding-3-small'); NULL when there is no vector. A trigger keeps
-- it so: clearing a vector (game end, as memory_lifecycle, which may update only `embedding`)
-- clears its embedder too.
--
-- One more internal role, never chosen by a request's credential:
-- - memory_reembed: acts for one tenant (scope_tenant) to replace vectors and their embedder id,
--   and nothing else: it reads rows and the tenant's data keys (to decrypt the text it embeds),
--   updates only (embedding, embedder), never of a game that has ended (game end cleared those
--   vectors for good), and inserts and deletes nothing.
-- The login role the service connects as must be a member of it, as of the other memory roles.

DO $$ BEGIN
  CREATE ROLE memory_reembed NOLOGIN NOSUPERUSER NOBYPASSRLS NOINHERIT;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
GRANT USAGE ON SCHEMA memory TO memory_reembed;

-- The lifecycle policies name the column; a column used by a policy cannot change its type.
DROP POLICY episodic_lifecycle ON memory.episodic;
DROP POLICY clue_lifecycle ON memory.clues;

ALTER TABLE memory.episodic  ALTER COLUMN embedding TYPE vector(512) USING NULL, ADD COLUMN embedder text;
ALTER TABLE memory.clues     ALTER COLUMN embedding TYPE vector(512) USING NULL, ADD COLUMN embedder text;
ALTER TABLE memory.social    ALTER COLUMN embedding TYPE vector(512) USING NULL, ADD COLUMN embedder text;
ALTER TABLE memory.lore      ALTER COLUMN embedding TYPE vector(512) USING NULL, ADD COLUMN embedder text;
ALTER TABLE memory.fragments ALTER COLUMN embedding TYPE vector(512) USING NULL, ADD COLUMN embedder text;

-- As in 0003, unchanged.
CREATE POLICY episodic_lifecycle ON memory.episodic TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant())
  WITH CHECK (tenant_id = memory.scope_tenant() AND embedding IS NULL);
CREATE POLICY clue_lifecycle ON memory.clues TO memory_lifecycle
  USING (tenant_id = memory.scope_tenant())
  WITH CHECK (tenant_id = memory.scope_tenant() AND embedding IS NULL);

CREATE FUNCTION memory.embedder_follows_embedding() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.embedding IS NULL THEN
    NEW.embedder := NULL;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER episodic_embedder BEFORE INSERT OR UPDATE ON memory.episodic
  FOR EACH ROW EXECUTE FUNCTION memory.embedder_follows_embedding();
CREATE TRIGGER clues_embedder BEFORE INSERT OR UPDATE ON memory.clues
  FOR EACH ROW EXECUTE FUNCTION memory.embedder_follows_embedding();
CREATE TRIGGER social_embedder BEFORE INSERT OR UPDATE ON memory.social
  FOR EACH ROW EXECUTE FUNCTION memory.embedder_follows_embedding();
CREATE TRIGGER lore_embedder BEFORE INSERT OR UPDATE ON memory.lore
  FOR EACH ROW EXECUTE FUNCTION memory.embedder_follows_embedding();
CREATE TRIGGER fragments_embedder BEFORE INSERT OR UPDATE ON memory.fragments
  FOR EACH ROW EXECUTE FUNCTION memory.embedder_follows_embedding();

-- memory_reembed: one tenant; game-bound rows only while their game has not ended.
CREATE POLICY game_reembed ON memory.games FOR SELECT TO memory_reembed
  USING (tenant_id = memory.scope_tenant());
CREATE POLICY data_key_reembed ON memory.data_keys FOR SELECT TO memory_reembed
  USING (tenant_id = memory.scope_tenant());
CREATE POLICY episodic_reembed ON memory.episodic TO memory_reembed
  USING (tenant_id = memory.scope_tenant() AND EXISTS (
    SELECT 1 FROM memory.games g WHERE g.tenant_id = episodic.tenant_id AND g.game_id = episodic.game_id AND g.ended_at IS NULL))
  WITH CHECK (tenant_id = memory.scope_tenant());
CREATE POLICY clue_reembed ON memory.clues TO memory_reembed
  USING (tenant_id = memory.scope_tenant() AND EXISTS (
    SELECT 1 FROM memory.games g WHERE g.tenant_id = clues.tenant_id AND g.game_id = clues.game_id AND g.ended_at IS NULL))
  WITH CHECK (tenant_id = memory.scope_tenant());
CREATE POLICY social_reembed ON memory.social TO memory_reembed
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (tenant_id = memory.scope_tenant());
CREATE POLICY lore_reembed ON memory.lore TO memory_reembed
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (tenant_id = memory.scope_tenant());
CREATE POLICY fragment_reembed ON memory.fragments TO memory_reembed
  USING (tenant_id = memory.scope_tenant()) WITH CHECK (tenant_id = memory.scope_tenant());

GRANT SELECT ON memory.games, memory.data_keys TO memory_reembed;
GRANT SELECT ON memory.episodic, memory.clues, memory.social, memory.lore, memory.fragments TO memory_reembed;
GRANT UPDATE (embedding, embedder) ON memory.episodic, memory.clues, memory.social, memory.lore, memory.fragments TO memory_reembed;
