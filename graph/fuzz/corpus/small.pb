

aPlaceholder*
dtype0

bRelua^a*
T0