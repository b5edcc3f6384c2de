# The restart guard and fencing on simulated time (tests/sim/sim_guard_test.cc):
# the logic of restart_guard_test and fencing_test without real-clock sleeps.
# Included from tests/CMakeLists.txt.
redlock_test(sim_guard_test sim/sim_guard_test.cc)
target_link_libraries(sim_guard_test PRIVATE redlock_sim)
