"""What every Mondrian method shares: the tree store and its compiled kernels (grow, extend
online, route, statistics), random streams, prefetching, input checks and lazy exports."""
