"""Fixtures every test folder may use: a throwaway PostgreSQL database."""

from tests.postgres import postgres_server, postgres_url

__all__ = ["postgres_server", "postgres_url"]
