"""Modules of ``scripts/make_lightrag_fixtures.py`` (run inside the LightRAG virtual environment): ``corpus``
(the fixture corpus's names, tokenizer seed, hash embedder), ``standin_llm`` (answers LightRAG's prompts) and
``writer`` (LightRAG sessions that write working directories, and their manifest)."""
