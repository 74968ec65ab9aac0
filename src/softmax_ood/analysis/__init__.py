"""Analysis shared by every study: seed aggregation, the claims engine, table rendering, the
paper-vs-ours side by side and figure style. Knows no paper; studies import it."""
