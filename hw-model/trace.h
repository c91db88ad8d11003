#include "trace/trace-hw_vcx.h"
