"""Locust's default options, untouched by config files (a master's and a worker's start from these)."""

from __future__ import annotations

from locust import argument_parser


def defaults():
    """Locust's parsed defaults; a stray locust.conf or pyproject.toml in the cwd must not change a run."""
    parser = argument_parser.get_empty_argument_parser()
    argument_parser.setup_parser_arguments(parser)
    parser._default_config_files = {}
    return parser.parse([])
