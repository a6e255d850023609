"""The HTTP API's routes, one module per resource: ``runs`` (start, read, stream, answer,
resume, fork, cancel, delete), ``tree`` (the agent tree and interventions), ``views`` (what the
web UI draws beyond frames) and ``info`` (health, agents, models, corpora)."""

from __future__ import annotations

__all__: list[str] = []
