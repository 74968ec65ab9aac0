"""What the cross-paper study's registration (:mod:`.study`) and its claims both read, kept here
so that neither imports the other."""

from __future__ import annotations

__all__ = ["HEADLINE"]

#: the headline claims (results page and section: the table at the top; ids or fnmatch patterns)
HEADLINE = ("ocs_trend:*", "same_rate:*", "normalised_uncertain:*", "seddik_weights:*")
