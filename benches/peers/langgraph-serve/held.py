"""How many runs of the `hold` graph wait in its tool: one counter for graph.py's graphs
and its `/bench/open` route, which `langgraph dev` loads as two separate modules."""

OPEN = 0
