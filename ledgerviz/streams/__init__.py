"""Commands over ledger files in bounded memory: the streamed summary that ``check --stream``
prints (``summary``) and the fork child written from a parent read as a stream
(``fork_file``)."""
