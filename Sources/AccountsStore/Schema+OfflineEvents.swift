/// The SQL of migration "v14" (which events a host's login cache delivered, so that a
/// PostgreSQL store's log copies in whole and back); never edit it once shipped.
let schemaV14 = """
  -- Migration "v14": the random id a host's login cache gave an event of a login it answered
  -- while the server was away, as PostgreSQL's audit_event keeps it: the mark that the event
  -- happened offline, and unique, so that a store copied back to a server still writes an
  -- event delivered again once. A new nullable column: every row of v13 stays as it is, none
  -- offline.
  ALTER TABLE audit_event ADD COLUMN offline_id TEXT CHECK (
    offline_id IS NULL OR (length(offline_id) = 32 AND offline_id NOT GLOB '*[^0-9a-f]*'));
  CREATE UNIQUE INDEX audit_event_by_offline_id ON audit_event (offline_id)
    WHERE offline_id IS NOT NULL;
  """
