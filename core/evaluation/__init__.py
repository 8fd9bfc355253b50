"""Evaluation of retrieval modes against gold evidence (recall@k, all@k, answer-in-context)."""
