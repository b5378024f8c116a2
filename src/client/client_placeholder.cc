#include "t0fs/client.h"
