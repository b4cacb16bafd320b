"""One module per log format; ``commitsleuth.parsers.registry`` lists them explicitly."""
