
9
cConst*
dtype0* 
valueB:ÿÿÿÿÿÿÿÿÿ
2
pPlaceholder*
dtype0*
shape
:
)
rReshapepc*
T0*
Tshape0