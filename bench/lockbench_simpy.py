"""The lock benchmark in SimPy 2 (Debian 12's python3-simpy, 2.3), for
bench/compare_external.sh only: N threads think Exp(10us), take one FIFO
lock (a SimPy Resource of capacity 1), hold it Exp(2us), release it, and
repeat, until a given number of acquisitions.

Python's own random numbers, not viosim's streams: the figures agree with
viosim's in distribution (throughput and mean wait, see the MVA values in
scenarios/lockbench.textproto), not draw for draw.

  /usr/bin/python3 bench/lockbench_simpy.py N ACQUISITIONS
prints one line: N acquisitions wall_seconds acquisitions_per_us wait_us.
"""

import random
import sys
import time

from SimPy.Simulation import Process, Resource, Simulation, hold, release, request

THINK_US = 10.0
HOLD_US = 2.0


class Thread(Process):
    def run(self, lock, rng, stats):
        while True:
            yield hold, self, rng.expovariate(1 / THINK_US)
            asked = self.sim.now()
            yield request, self, lock
            stats["wait"] += self.sim.now() - asked
            stats["acquisitions"] += 1
            if stats["acquisitions"] >= stats["target"]:
                self.sim.stopSimulation()
            yield hold, self, rng.expovariate(1 / HOLD_US)
            yield release, self, lock


def main():
    n, target = int(sys.argv[1]), int(sys.argv[2])
    sim = Simulation()
    sim.initialize()
    lock = Resource(capacity=1, sim=sim)
    stats = {"acquisitions": 0, "wait": 0.0, "target": target}
    for i in range(n):
        t = Thread(name="thread%d" % i, sim=sim)
        sim.activate(t, t.run(lock, random.Random(i + 1), stats))
    start = time.perf_counter()
    sim.simulate(until=1e15)
    wall = time.perf_counter() - start
    acq = stats["acquisitions"]
    print("%d %d %.3f %.4f %.3f" % (n, acq, wall, acq / sim.now(), stats["wait"] / acq))


if __name__ == "__main__":
    main()
