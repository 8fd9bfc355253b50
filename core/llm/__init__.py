"""The OpenAI-compatible LLM path of RAGScope.

``client`` (ChatModel protocol, OpenAIChat with retries/cancellation), ``cache`` (response cache and
usage wrappers), ``records`` (forgiving parser of extraction records), ``extraction`` (LLMExtractor),
``summaries`` (profile and summary-tree summarizers), ``keywords`` (LLMKeywords), ``answers``
(generated and streamed answers) and ``provider`` (choosing and building all of these).
"""
