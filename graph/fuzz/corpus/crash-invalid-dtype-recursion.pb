
9
cConst*
dtype0* 
valueBûþÿÿ*)
rReshapep
c*
T0*
Tshape0