"""Integer codes shared by the kernels and their callers (no Numba here, so
callers can name a mode without importing the compiler)."""

# gain modes
EXP2 = 0
LINEAR = 1
TABLE = 2
# ties modes
AVERAGE = 0
STABLE = 1
OPTIMISTIC = 2
PESSIMISTIC = 3
# what scan_values reports, one column each: the first row where ...
SCAN_NAN_SCORE = 0  # a score is NaN
SCAN_BAD_LABEL = 1  # a label is NaN or infinite
SCAN_NEGATIVE = 2  # a label is negative
SCAN_FRACTION = 3  # a label is not an integer
SCAN_N = 4
# measure families: the kernel that scores a measure (``families`` of a measure layout)
F_BASIC = 0   # the usual binary measures (measures_chunk)
F_BINARY = 1  # the other measures read from flag bits (measures_chunk_all)
F_GRADED = 2  # measures that read the gains in rank order and the ideal gains (graded_chunk)
# measure codes: one distinct number a measure, dispatched at run time within the kernel
# of its family (its registry row's ``family``); measures read from flag bits (binary.py):
M_P = 0
M_R = 1
M_SUCCESS = 2
M_RR = 3
M_AP = 4
M_RPREC = 5
M_JUDGED = 6
M_NUM_RET = 7
M_NUM_REL = 8
M_NUM_REL_RET = 9
M_BPREF = 10
M_SET_P = 11
M_SET_R = 12
M_SET_REL_P = 13
M_SET_MAP = 14
M_NUM_NONREL_JUDGED_RET = 15
M_REL_P = 16
M_RPREC_MULT = 17
M_IPREC = 18
M_11PT_AVG = 19
M_SET_F = 20
M_UTILITY = 21
M_UNJ = 22
M_BING = 23
M_RBP_RESID = 24
M_INFAP = 25
M_RBP_BIN = 26
M_RBP_RESIDUAL = 27
M_NUM_Q = 28
M_F1 = 29
M_BPREF_RANX = 30
M_IPREC_TE9 = 31  # iprec and 11pt_avg with trec_eval 9's rank of the c-th relevant item
M_11PT_AVG_TE9 = 32  # (pytrec_eval): int(recall x R + 0.9), not round(recall x R)
M_HITS = 33
# graded measures (graded.py: read each query's gains in rank order and its ideal gains)
M_RBP = 64
M_G = 65
M_NDCG_REL = 66
M_RNDCG = 67
M_ERR = 68
