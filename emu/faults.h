// faults.c's hooks, installed with the block hooks (emu_install_base).
#ifndef EMUPROF_FAULTS_H
#define EMUPROF_FAULTS_H

#include "hooks.h"

// emu_install_faults adds the cpuid, invalid-memory and interrupt hooks.
uc_err emu_install_faults(struct emu_state *s);

#endif
