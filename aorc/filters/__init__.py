"""Row filters: parse pyarrow-style DNF filters, evaluate them on rows and prune stripes and
row groups on statistics and bloom filters. Synchronous, no I/O."""
