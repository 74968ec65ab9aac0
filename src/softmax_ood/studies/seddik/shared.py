"""What the Seddik study's registration (:mod:`.study`) and its claims both read, kept here
so that neither imports the other."""

from __future__ import annotations

__all__ = ["HEADLINE", "KURT_BAR", "SKEW_BAR"]

#: the headline claims (results page and section: the table at the top; ids or fnmatch patterns):
#: Figs. 2 and 4 (accuracy) and what Fig. 5 draws (weights, logits); C3, Fig. 5's accuracy, is
#: an additional check the figure does not show
HEADLINE = ("C1", "C2", "C3-weights", "C3-logits")

#: the bars of "Gaussian" in Fig. 3's test, fixed in advance (conventional bounds of an
#: approximately normal variable): |skewness| below 0.5 (approximately symmetric) and |excess
#: kurtosis| below 1; a variable's distance from Gaussian is the larger of the two in bar units
SKEW_BAR = 0.5
KURT_BAR = 1.0
