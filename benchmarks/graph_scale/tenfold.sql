-- The 10 × dev_musique_full stand-in of docs/indexing-speed.md: on a COPY of a workspace's ragscope.sqlite3
-- (sqlite3 COPY/ragscope.sqlite3 < benchmarks/graph_scale/tenfold.sql), every entity, relation, mention and
-- mention edge copied nine times under renamed keys (key~1 … key~9; relation and edge pairs kept sorted).
BEGIN;
CREATE TEMP TABLE k(n INTEGER); INSERT INTO k VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9);
INSERT INTO entities SELECT e.entity_key||'~'||k.n, e.name||' ~'||k.n, e.type, e.description, e.source_chunk_ids, e.vector_id, e.aliases FROM entities e, k;
INSERT INTO relations SELECT min(r.source_key||'~'||k.n, r.target_key||'~'||k.n), max(r.source_key||'~'||k.n, r.target_key||'~'||k.n), r.keywords, r.description, r.weight, r.source_chunk_ids, r.vector_id FROM relations r, k WHERE r.source_key NOT LIKE '%~%';
INSERT INTO mentions SELECT m.term||'~'||k.n, m.chunk_id, m.count, m.label FROM mentions m, k WHERE m.term NOT LIKE '%~%';
INSERT INTO mention_edges SELECT min(a||'~'||k.n, b||'~'||k.n), max(a||'~'||k.n, b||'~'||k.n), weight FROM mention_edges, k WHERE a NOT LIKE '%~%';
COMMIT;
