
6
c0/inputs_0Placeholder*
dtype0*
shape:
Y
c0/feed_inputs_0Const*
dtype0*1
value(B&"ê¶¿r¤=¿Y$²?¡€®¿¾¿Àì§¿
6
c0/inputs_1Placeholder*
dtype0*
shape:
Y
c0/feed_inputs_1Const*
dtype0*1
value(B&"ê¶¿r¤=¿Y$²?¡€®¿¾¿Àì§¿
6
c0/inputs_2Placeholder*
dtype0*
shape:
Y
c0/feed_inputs_2Const*
dtype0*1
value(B&"ê¶¿r¤=¿Y$²?¡€®¿¾¿Àì§¿
F
c0/opAddNc0/inputs_0c0/inputs_1c0/inputs_2*
N*
T0
Q
c0/want0Const*
dtype0*1
value(B&"0ˆÀV;ÀC›…@yà‚ÀƒÀ ã{À"ª