"""The outbox engine: work the marketplace must send to the platform, run until done.

One engine for every kind of such work (order pushes, return and refund calls, EDRTS
status sends). Each piece of work is a row of its app's table carrying the engine's
fields (``models.OutboxItem``): attempts, failures, the next attempt's time, the claim
(token and lease) and the last error. A *kind* (``kind.OutboxKind``) names the table and
says what to send for a row and what an answer means for it; the engine does the rest,
the same way for every kind:

* **claim** (``claim.py``): one short transaction locks due rows (``SKIP LOCKED`` on
  Postgres: drains side by side never wait on each other), stamps them with a random
  token and a lease, and lets the kind build what it will send. The lease itself is
  ``lease.py``, the one claim-with-lease of the codebase (the sync's pull and fan-out
  take their rows through it too);
* **send** (``send.py``): calls the platform with no transaction open, several at once
  if the kind allows, never starting a call that could outlive the lease; a 429 or a dead
  grant holds the rest of that seller's calls;
* **record** (``record.py``): one transaction writes each answer, only to rows that still
  hold the claim (a worker whose lease ran out loses to the one that took over): done,
  the platform's wait (embargo, not counted), capped backoff (``backoff.py``: one formula),
  the dead letter after the kind's failure limit, or the kind's own outcome;
* **wake-up** (``doorbell.py``): a change rings a drain without one broker message per
  row; the **sweeper** (``sweep.py``) rings again for anything overdue, so a lost message
  only delays; **staff retry** makes a dead letter due again (``sweep.due_again``);
* **metrics** (``metrics.py``): backlog, oldest due, claimed and dead letters per kind.

The engine knows no app: it imports only the platform client's errors and call log. The
database is the truth; the broker only wakes workers.
"""
