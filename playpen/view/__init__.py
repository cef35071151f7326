"""`playpen view`: a local episode browser over the folders Playpen writes.

index.py finds episodes and reads only their scores (fast on large folders); episode.py reads one episode
when it is opened; plot.py draws a training run's curves as inline SVG; server.py is the web app (starlette,
jinja2 templates in templates/, served by uvicorn). Nothing here writes into the folders it shows.
"""
