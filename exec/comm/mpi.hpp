// <mpi.h> without the deprecated C++ bindings: Open MPI's mpi.h pulls them in (and their library) unless told not
// to. Every exec unit that talks MPI includes this header instead of <mpi.h>.
#pragma once

#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
