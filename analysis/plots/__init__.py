"""gossipsim's figures and tables, as small modules: results (reading what
run and sweep wrote, strictly), stats (intervals over seeds), tables
(time_to_accuracy), curves (figures of runs), timeline, sweep (a sweep's
figures and map), sim_vs_real, figure (where figures go and what they
show) and cli (the plot command). analysis/plot.py is its entry point."""
