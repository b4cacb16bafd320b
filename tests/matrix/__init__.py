"""The detection matrix: anomaly x evidence source x layout x variant, each row with a negative twin.

``formats`` writes each source's lines from the source code that writes them (the strings are
named there); ``rows`` builds the rows. tests/test_detection_matrix.py runs them.
"""
