"""The Waggle study's analysis: view sets (viewset.py), the matrix's tables across populations and
horizons (matrix.py, planned by plays.py) and the report's Waggle section (report.py); their captions in
captions/. See README.md."""
