-- 0002: working memory, the context log, and what episodic rows need for them.

-- Episodic rows now also hold serialized working memory (kind 'working_summary', no single
-- speaker) and remember whether the speaker's id was per-session (anonymous).
ALTER TABLE memory.episodic
  ADD COLUMN kind text NOT NULL DEFAULT 'utterance' CHECK (kind IN ('utterance', 'working_summary')),
  ADD COLUMN anonymous boolean NOT NULL DEFAULT false,
  ALTER COLUMN participant_id DROP NOT NULL,
  ADD CONSTRAINT episodic_speaker CHECK (kind <> 'utterance' OR participant_id IS NOT NULL);

-- Working memory: one row per (game, room, npc): the recent transcript, its rolling summary and
-- the last state version; encrypted under the game's key; flushed into episodic memory when the
-- NPC moves or the room is suspended.
CREATE TABLE memory.working (
  tenant_id     uuid NOT NULL,
  game_id       text NOT NULL,
  room_id       text NOT NULL,
  npc_id        text NOT NULL,
  last_seq      integer NOT NULL DEFAULT -1,
  state_version integer NOT NULL DEFAULT 0,
  key_id        uuid NOT NULL,
  ciphertext    bytea NOT NULL,
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, game_id, room_id, npc_id),
  FOREIGN KEY (tenant_id, game_id) REFERENCES memory.games (tenant_id, game_id),
  FOREIGN KEY (tenant_id, key_id) REFERENCES memory.data_keys (tenant_id, key_id)
);

-- Explainability: one record per context assembly. Ids, scores, timings and token counts only;
-- never memory text.
CREATE TABLE memory.context_log (
  id            uuid NOT NULL,
  tenant_id     uuid NOT NULL,
  game_id       text NOT NULL,
  npc_id        text NOT NULL,
  room_id       text NOT NULL,
  state_version integer NOT NULL,
  record        jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, game_id, id),
  FOREIGN KEY (tenant_id, game_id) REFERENCES memory.games (tenant_id, game_id)
);
CREATE UNIQUE INDEX context_log_id ON memory.context_log (id);

ALTER TABLE memory.working     ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
ALTER TABLE memory.context_log ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;

CREATE POLICY working_scope ON memory.working TO memory_runtime
  USING (tenant_id = (SELECT memory.scope_tenant()) AND game_id = (SELECT memory.scope_game()) AND npc_id = (SELECT memory.scope_npc()))
  WITH CHECK (tenant_id = (SELECT memory.scope_tenant()) AND game_id = (SELECT memory.scope_game()) AND npc_id = (SELECT memory.scope_npc()));

-- The log is read back by game (a developer asks "why did she say that" with the game's token).
CREATE POLICY context_log_scope ON memory.context_log TO memory_runtime
  USING (tenant_id = (SELECT memory.scope_tenant()) AND game_id = (SELECT memory.scope_game()))
  WITH CHECK (tenant_id = (SELECT memory.scope_tenant()) AND game_id = (SELECT memory.scope_game()) AND npc_id = (SELECT memory.scope_npc()));

GRANT SELECT, INSERT, UPDATE, DELETE ON memory.working TO memory_runtime;
GRANT SELECT, INSERT ON memory.context_log TO memory_runtime;
