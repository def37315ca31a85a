
6
c0/featuresPlaceholder*
dtype0*
shape:
Y
c0/feed_featuresConst*
dtype0*1
value(B&"ê¶¿r¤=¿Y$²?¡€®¿¾¿Àì§¿
8
c0/op	LeakyReluc0/features*
T0*
alpha%š™™>
Q
c0/want0Const*
dtype0*1
value(B&"}Ú¾#’c¾Y$²?(gÑ¾Ÿä¾‚É¾"ª