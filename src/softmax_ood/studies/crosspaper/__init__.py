"""The cross-paper study: each paper's question asked of another paper's models.

(a) Kang et al.'s reversion to the optimal constant solution (OCS) asked of the LogitNorm
study's CE and LogitNorm networks; (b) Ulmer & Cinà's Theorem 1 (confidence along rays) asked of
the same networks, raw logits beside the normalised logits LogitNorm trains on; (d) Kang's
discriminator as a shared axis on which every paper's OOD sets are placed.

Modules: :mod:`.measure` (grid, rays, model outputs -> frames), :mod:`.claims`, :mod:`.figures`,
:mod:`.tables`, :mod:`.departures`. Trains nothing: the networks are core runs declared through
the ``runs`` hook (with the default config the LogitNorm grid's, trained once for both studies);
the corruptions and the discriminator are the core's, reached through Kang's public functions.
No imports here.
"""
