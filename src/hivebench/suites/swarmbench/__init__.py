"""SwarmBench: embodied grid swarms (pursuit, synchronization, foraging, flocking, transport) under push
physics with local broadcast messages. In progress: the world, levels, physics, four tasks' rules and
the episode task are here; the suite is not yet registered (hivebench.registry)."""
