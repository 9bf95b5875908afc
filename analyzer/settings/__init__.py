"""One frozen settings model, fed by flags, EBS_ANALYZER_* variables and an optional YAML file.

Precedence: a flag beats its variable, which beats the file. Unknown keys in the file are
errors, and every error names the flag, variable or file the bad value came from. Secrets (the
webhook, an Alertmanager's password or token) are handed to the log's redaction as soon as
they are known, and no error repeats them.

Each group of settings is a model in a module of its own, with its checks: what is watched
(scope, accounts, shards), how it is read (reading, polling, agents), what is made of it
(rules, pricing, alerts, Slack, Alertmanager) and the daemon's own (listener, logs).
`Settings`, composed of them, and `load`, which reads it, are in loading.py.
"""

from analyzer.settings.accounts import AccountEntry, MemberFilter, OrganizationSettings
from analyzer.settings.alertmanager import BasicAuth
from analyzer.settings.loading import ENV_PREFIX, Settings, load

__all__ = [
    "ENV_PREFIX",
    "AccountEntry",
    "BasicAuth",
    "MemberFilter",
    "OrganizationSettings",
    "Settings",
    "load",
]
