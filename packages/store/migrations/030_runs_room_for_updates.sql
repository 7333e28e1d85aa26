-- Room on each page of runs for the updates of the rows just inserted there
-- (docs/performance.md, "Design decisions and the measurements behind them").
-- New runs are inserted together (createRuns), so they fill a page at once; their writer's mark (published_version)
-- then found no room beside them, and 7 of 3,200 marks were HOT updates: every other one wrote a new entry into
-- each of the runs' indexes. With half of each new page left free, all 3,200 were HOT. Pages written before this
-- keep their fill until rewritten.
ALTER TABLE runs SET (fillfactor = 50);
