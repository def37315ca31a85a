
4
	c0/logitsPlaceholder*
dtype0*
shape:
g
c0/feed_logitsConst*
dtype0*A
value8B6"(< N?pôÛ¾å4¿íZ¿Æ‹¨¾	.(¿7PU¿«Ë!¾Ÿ è¿iŒ¿
$
c0/opSoftmax	c0/logits*
T0
a
c0/want0Const*
dtype0*A
value8B6"({úó>=ò>(3×=ÝŽ>Yð>Úlf>#.A>Á½>tø=Çf>"ª