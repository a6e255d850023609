"""The exception hierarchy of kforge.

ForgeError
 ├── ConfigurationError          a setting, flag or environment variable is wrong
 │    └── MissingExtraError      a feature's optional extra is not installed
 ├── ValidationError             input does not match its schema
 │    ├── ToolArgumentsError     a tool call's arguments break the tool's input schema
 │    └── ToolDefinitionError    a tool's name or schema is malformed
 ├── ModelError                  a model provider failed
 │    ├── ModelAuthError         bad or missing credentials (never retried)
 │    ├── ModelNotFoundError     the endpoint does not serve that model
 │    ├── ModelUnavailableError  server unreachable, timed out, or out of retries
 │    ├── ModelOutputError       output could not be parsed or repaired into the schema
 │    ├── ModelResponseError     the endpoint's reply is not a valid chat-completions response
 │    └── ScriptedModelError     a scripted model was called unexpectedly or left unconsumed
 ├── ToolError                   a tool could not run
 │    ├── DuplicateToolError     a registry already has a tool of that name
 │    └── UnknownToolError       (a tool that times out is an error result, kind "timeout")
 ├── StoreError                  persistence failed
 │    ├── RunNotFoundError
 │    ├── StateCorruptionError   neither the snapshot nor the frames rebuild the state
 │    ├── WriteConflictError     another writer committed to the run first
 │    │    └── RunLeasedError    the run is live in another process (also an InvalidRunStateError)
 │    └── InvalidRunStateError   the run is not in a status that allows the operation
 ├── GraphDefinitionError        a phase graph is malformed
 ├── AppendOnlyError             a list declared to only grow was changed in place
 ├── ReplayDivergenceError       a resumed step asked for something other than what it recorded
 └── LimitExceededError          a step, visit, time, token or cost limit was hit
"""

from __future__ import annotations

__all__ = [
    "AppendOnlyError",
    "ConfigurationError",
    "DuplicateToolError",
    "ForgeError",
    "GraphDefinitionError",
    "InvalidRunStateError",
    "LimitExceededError",
    "MissingExtraError",
    "ModelAuthError",
    "ModelError",
    "ModelNotFoundError",
    "ModelOutputError",
    "ModelResponseError",
    "ModelUnavailableError",
    "ReplayDivergenceError",
    "RunLeasedError",
    "RunNotFoundError",
    "ScriptedModelError",
    "StateCorruptionError",
    "StoreError",
    "ToolArgumentsError",
    "ToolDefinitionError",
    "ToolError",
    "UnknownToolError",
    "ValidationError",
    "WriteConflictError",
]


class ForgeError(Exception):
    """Root of every error kforge raises on purpose."""


class ConfigurationError(ForgeError):
    pass


class MissingExtraError(ConfigurationError):
    """A feature needs an optional extra that is not installed; the message says how to add it."""


class ValidationError(ForgeError):
    pass


class ToolArgumentsError(ValidationError):
    pass


class ToolDefinitionError(ValidationError):
    pass


class ModelError(ForgeError):
    pass


class ModelAuthError(ModelError):
    pass


class ModelNotFoundError(ModelError):
    pass


class ModelUnavailableError(ModelError):
    pass


class ModelOutputError(ModelError):
    pass


class ModelResponseError(ModelError):
    pass


class ScriptedModelError(ModelError):
    pass


class ToolError(ForgeError):
    pass


class DuplicateToolError(ToolError):
    pass


class UnknownToolError(ToolError):
    pass


class StoreError(ForgeError):
    pass


class RunNotFoundError(StoreError):
    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run with id '{run_id}' (list runs with: kforge runs list)")
        self.run_id = run_id


class StateCorruptionError(StoreError):
    pass


class WriteConflictError(StoreError):
    pass


class InvalidRunStateError(StoreError):
    pass


class RunLeasedError(WriteConflictError, InvalidRunStateError):
    """The run's lease is held by another live writer; nothing was written."""

    def __init__(self, run_id: str, owner: str, expires_at: float) -> None:
        from datetime import UTC, datetime

        until = datetime.fromtimestamp(expires_at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        super().__init__(
            f"run '{run_id}' is live in another process (lease held by {owner} until {until}); "
            "wait for it to pause or end, or resume it after the lease expires if that process "
            "is gone"
        )
        self.run_id = run_id
        self.owner = owner
        self.expires_at = expires_at


class GraphDefinitionError(ForgeError):
    pass


class AppendOnlyError(ForgeError):
    """An ``AppendOnlyList`` in an agent's state, or one of its items, was changed in place."""


class ReplayDivergenceError(ForgeError):
    pass


class LimitExceededError(ForgeError):
    def __init__(self, limit: str, value: float, maximum: float) -> None:
        super().__init__(f"limit '{limit}' reached: {value:g} of {maximum:g}")
        self.limit = limit
        self.value = value
        self.maximum = maximum
